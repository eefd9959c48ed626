echo ok
rm­ -rf ./build
