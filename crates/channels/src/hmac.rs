//! HMAC-SHA256 (RFC 2104, the `hmac` crate over `sha2`), for the webhook
//! signature header.

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// SHA-256's block size: HMAC's key length after RFC 2104's first step.
const BLOCK: usize = 64;

/// HMAC-SHA256 of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    // RFC 2104's key step (hash a key longer than the block, zero-pad to
    // the block), so the MAC is built from a block-sized key, which cannot
    // fail; the result is the same MAC as for the original key.
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut mac = <Hmac<Sha256> as KeyInit>::new(&block.into());
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// The `X-Talon-Signature` value for `body` under `key`:
/// `sha256=<hex of HMAC-SHA256(key, body)>`.
pub fn signature_header(key: &[u8], body: &[u8]) -> String {
    format!("sha256={}", hex(&hmac_sha256(key, body)))
}

/// Whether `header` is the signature of `body` under `key`, compared in
/// constant time (what a receiver does).
pub fn verify_signature(key: &[u8], body: &[u8], header: &str) -> bool {
    let expected = signature_header(key, body);
    let (a, b) = (expected.as_bytes(), header.trim().as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or_default())
            .collect()
    }

    /// RFC 4231 test cases 1, 2, 6 (a key longer than the block).
    #[test]
    fn rfc_4231_vectors() {
        let cases: [(Vec<u8>, &[u8], &str); 3] = [
            (
                vec![0x0b; 20],
                b"Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe".to_vec(),
                b"what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                vec![0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
        ];
        for (key, msg, want) in cases {
            assert_eq!(hex(&hmac_sha256(&key, msg)), want);
            assert_eq!(hmac_sha256(&key, msg).to_vec(), unhex(want));
        }
        let sig = signature_header(b"k", b"body");
        assert!(verify_signature(b"k", b"body", &sig));
        assert!(!verify_signature(b"k", b"body!", &sig));
        assert!(!verify_signature(b"other", b"body", &sig));
    }
}
