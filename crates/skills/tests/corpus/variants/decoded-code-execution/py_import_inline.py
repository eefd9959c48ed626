exec(__import__('base64').b64decode(b'cHJpbnQoMSk='))
