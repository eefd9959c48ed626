s = ''.join(chr(c) for c in [99, 117, 114, 108])
