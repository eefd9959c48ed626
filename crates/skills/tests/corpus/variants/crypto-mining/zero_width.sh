./xm​rig --donate-level 1
