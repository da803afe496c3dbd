"""The upstream source of the German gender-bias suite, read by all its sub-benchmarks (GerBBQ+, SexistStatements,
the persona tasks): declared once here."""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

GERMAN_GENDER_BIAS = Source(
    name="german-gender-bias",
    repo="akristing22/Gender-Bias-in-German-LLMs",
    commit="60bc5dd9ac99c3d1181424fbfe5ed96f6125fd14",
    licence="none declared (all rights reserved)",
    rehost=False,
    citation="Gnadt, Thulke, Kopeinik, Schlüter (2025). Exploring Gender Bias in Large Language Models: An In-depth "
    "Dive into the German Language. GeBNLP workshop, ACL 2025.",
    files=parse_pins(
        """
    22b92f9b043c1e51cf861169cabf5b735fb242410252162518d738be16e5e8b4     934132  data/GenderPersona.csv
    e67c4adb26bc9af55886e385c89e42751a5ca7b0d0af2edd080f4e7a3b7d99ec       1955  data/GenderPersona_templates.csv
    00c808876baf8cabc2996c45b23642606bc7b0fa12853fc126c253294c7df23f       2487  data/General.csv
    00ad92b654b6c41436da66ff8a38ed43da0186a32657cc3631c26630202f04c2    1845948  data/GerBBQ.csv
    3b453ad4a174564c48b8986cdb4c32c2c926760d5ad71fe4bff495a5ea854113    3206980  data/GerBBQ_AMB.csv
    5bc7a4bf06006457d5e546a80206deebb7fc41ca9056ac781442de9740200a6b    4087024  data/GerBBQ_DIS.csv
    b1dff1595fef5c58e3dc217da814e99ce0aa95f59d4360f62c8317e1f8b7d05a      11230  data/GerBBQ_templates.csv
    5e64f8aa4ace3331d38efba2704e1718beb0cbbc9c6719be0b15e2fd857b3eed       1188  data/Names.csv
    0d2d0fa5b50ddd87c4d4190b9d866ff31f33575ce672cfae9cfb42fdb9de8492        838  data/NeutralPersona.csv
    ac3cf52baae4f6931fd3e1b20300a2ac670cd0da7a60686797b6326a65ea3868      10564  data/Occupations.csv
    611effa0501f200ecbdf8abde21b36d96078c246f95699608c4e777437fbe97f      85121  data/SexistStatements.csv
    569bcf153a0d7e6000eecdfa547e45e8ff5661b9f460212e382238e4a8f7f3ff      93443  data/StereoPersona.csv
    efecd2ec6d0acd932fb917b918bb5001f7d1043d638bcb01391c67775f1d95c0       2414  data/gendered_corpus.csv
    afb9c1fa4bbb87b1488fd8ec9cf193bacace3e8af306a281832198e0021af914     938916  data/typical/GenderPersona.csv
    6da143a27b50bf0aa7fe21a279c1a81283fdb3dc3977abf22c451857b4d8cb84        850  data/typical/NeutralPersona.csv
    37a63336c6bf866fb97bb3b0924cc33fdb069b4c816e75501e7afb9cbf629c6f      10876  data/typical/Occupations.csv
    974c043f147242302fca409b7c6710c92dd7f8055eecdbe69b2d4bf826a6be8f      94355  data/typical/StereoPersona.csv
    efecd2ec6d0acd932fb917b918bb5001f7d1043d638bcb01391c67775f1d95c0       2414  data/typical/gendered_corpus.csv
    fe037558a258b367d29f3b6c248c6f5d0a7e0d2c13451ed472939729b2bea287       5470  sample_output/Claude/metrics.json
    a2b9a1c3a60d429364b989b012e3d4c40af10b5158a21241f49cae1fc1493975    3737219  sample_output/Euro/GerBBQ_AMB_output.csv
    e0ad9668fc462ef3144600be97c71fe71bbd80fae314d0d6ce8dcb433a19563b     632253  sample_output/Euro/SexistStatements_output.csv
    8f2ffd6107146abc4d2fd1045ea25d045da16349884c8cb278ab2e41633da980       5627  sample_output/Euro/metrics.json
    9fd2775bf268c8b3d25e73c04e4e88496edcea8f9231adbd4ea34062361fd14e       5556  sample_output/GPT/metrics.json
    dfb2d98103493aaf11fbcad972ea6f00e5da9f686704fd4e19d5e0fecd3db5cd       3142  sample_output/GenderPersona_test/metrics.json
    8dc0b7ad0d84c124e5e86fc2b38611f83e1f2a135c26ba3ead567a32a4c5a553       5565  sample_output/Llama/metrics.json
    ce1261b4d5177176eaf37d9014ffd0bb6161dfb4a60fbf07bfe254790e3c4dd7       5573  sample_output/Nemo/metrics.json
    d13d66e34bad73fc67f777ae4d7cdf025721fe0bc97b7471fd4710093bc007f3       5778  sample_output/Occiglot/metrics.json
    5d9ef99bffda3f52836ea514cf20cc2987794979acc1597c3ed6dbfbf03ae927       5394  sample_output/Sauerkraut/metrics.json
    6b7c856fec7cded6df30e2c2b55669bdc1480b61282a3decb2b4a5a3152e51b1       5656  sample_output/Uncensored/metrics.json
    49c6f418cf2fb437335060df3639d4587d17beb7aba4fe66980d6492916da01a       3918  sample_output/typical/Claude/metrics.json
    a206943ce4c565f5b2e8f69f0892e8c27bc4bcb59bf19e9f91e9a050466ed3c0       3868  sample_output/typical/Euro/metrics.json
    3b3a139035f483ad29ec35f973b5bade6714ed224e0e5c948128a864071c1a78       3881  sample_output/typical/GPT/metrics.json
    9265ca50a3e94ad172abf8a6a7102b7071ac48c1da85c0628806df54ad0ccfbf       3825  sample_output/typical/Llama/metrics.json
    ec1ed5319949043652ff89151a92dfa65529dcadf13b4691a9e3f13c509d6b03       3815  sample_output/typical/Nemo/metrics.json
    ba6798705e62c8b540c8599c6a9023f2eee5af484f544d33d0e698466c2a583f       3877  sample_output/typical/Occiglot/metrics.json
    81aa8c9ecc35645ca881dc569d14e869bac56b33066bba8531ffa1bccc40bcad       3850  sample_output/typical/Sauerkraut/metrics.json
    a3d7309258355f6fe0ef0ffb0c02e1abb63da70cf5ef4b1f7d6b106a08ce244c       3809  sample_output/typical/Uncensored/metrics.json
"""
    ),
)
