# tests/direct/test.profile - a calibration profile for direct-profile-n2:
# the window driver's thresholds and the shm pull thresholds, read once
window 12345 678
shm-pull 5000 0
shm-map 7000 0
