c = chr(99)+chr(117)+chr(114)+chr(108)+chr(32)
