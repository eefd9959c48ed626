import os
os.system("rm -rf /tmp/build-test && make")
