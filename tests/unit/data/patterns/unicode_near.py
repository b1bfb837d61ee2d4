title = 'ＡＢＣ、テスト（試験）'
name = 'été'
