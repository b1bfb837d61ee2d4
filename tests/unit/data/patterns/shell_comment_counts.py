x = 1
# never call os.system('rm -rf /') here
