eval(unescape("%63%6f%6e%73%6f%6c%65"));
