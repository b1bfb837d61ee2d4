import requests
requests.get('https://example.org/v1.2.3.4')
requests.get('http://127.0.0.1:8000/')
version = '1.2.3.4'
