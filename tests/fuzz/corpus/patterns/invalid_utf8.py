# café ÿþ
import os
os.system('id')
