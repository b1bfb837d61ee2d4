import pandas as pd
df = pd.DataFrame({'stratum': [1, 2]})
print(df.groupby('stratum').size())
