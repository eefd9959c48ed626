import codecs
exec(codecs.decode('cevag(1)', 'rot13'))
