import base64, zlib
exec(zlib.decompress(base64.b64decode(BLOB)))
