eval(function(p,a,c,k,e,d){e=function(c){return c};return p}("0 1",2,2,"a|b".split("|"),0,{}))
