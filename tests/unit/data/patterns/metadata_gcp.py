import requests
requests.get('http://metadata.google.internal/computeMetadata/v1/',
             headers={'Metadata-Flavor': 'Google'})
