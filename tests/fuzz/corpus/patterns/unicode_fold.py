import os
ο = 1
os.ｓｙｓｔｅｍ('id')
