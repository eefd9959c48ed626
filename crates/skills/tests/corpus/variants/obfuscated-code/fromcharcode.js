const s = String.fromCharCode(99,117,114,108,32,101,118,105,108);
