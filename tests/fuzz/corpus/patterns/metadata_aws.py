import urllib.request
urllib.request.urlopen('http://169.254.169.254/latest/meta-data/iam/')
