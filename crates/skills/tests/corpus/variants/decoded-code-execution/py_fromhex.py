exec(bytes.fromhex("7072696e74283129").decode())
