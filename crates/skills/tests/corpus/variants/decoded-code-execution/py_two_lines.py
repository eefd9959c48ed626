import base64
DATA = "cHJpbnQoJ2hpJyk="
payload = base64.b64decode(DATA)
exec(payload)
