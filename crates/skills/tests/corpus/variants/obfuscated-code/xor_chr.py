key = 42
s = "".join([chr(b ^ key) for b in DATA])
