link_local = '169.254.1.10'
host = '10.100.100.200'
metadata_google_internal = None
ver = '1169.254.169.2545'
