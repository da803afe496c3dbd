"""The upstream source of multilingual StereoSet: the translated pickles (and the JSON-lines copies an offline
mirror holds instead, made by :func:`~lm_eval_stereo.tasks.stereoset_multi.jsonl.mirror_copies`) and the
reference predictions."""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source
from lm_eval_stereo.tasks.stereoset_multi.jsonl import mirror_copies

STEREOSET_MULTI = Source(
    name="stereoset-multi",
    repo="slds-lmu/stereotypes-multi",
    commit="883f005dd9d003a6974e498f435629ec46d931c7",
    licence="CC BY-SA 4.0 (translation of the StereoSet dev set; the repository declares no licence)",
    citation="Öztürk, Nedelchev, Heumann, Garces Arias, Roger, Bischl, Aßenmacher (2023). How Different Is "
    "Stereotypical Bias Across Languages? arXiv:2307.07331.",
    files=parse_pins(
        """
    f9107286b96c67b932bf5efc4a065f06c7d835f1c29fd282d8fda7a43688b517    3221935  create_dataset/data/intersentence/df_intersentence_de.pkl
    f0fb0258fedd0823975412ba796997d3c34ee1988f5526b514ea8a6390e8e4db    3141129  create_dataset/data/intersentence/df_intersentence_en.pkl
    5183a7bf2aef552cd9d8427370b97c803759fdeba120623779d037aeccdbf14a    3202227  create_dataset/data/intersentence/df_intersentence_es.pkl
    acd0ad25d0c46eda0ce2999f09f04d4fc603e6242ba5ff6ab9c68aa469e02c7a    3245067  create_dataset/data/intersentence/df_intersentence_fr.pkl
    cd014f42d29db9c9993e28bcab5795c6a1d8a4e0af0b6c5f45ac48976e2dd15c    3180903  create_dataset/data/intersentence/df_intersentence_tr.pkl
    43bcb9eadab177b9593743f923fa5413ac3aa60486bef2f112057fa43ae54f7d    3300263  create_dataset/data/intrasentence/df_intrasentence_de.pkl
    f83353183ac20ffcdc08c5cc905b89d9748c8ebee7bc319bb9d1e2311deb1e1c    3197280  create_dataset/data/intrasentence/df_intrasentence_en.pkl
    0ad6fbcbced6311f5ba0050794ad7d43d00d48ab9e34397dcd0740047f303aa9    3259659  create_dataset/data/intrasentence/df_intrasentence_es.pkl
    adb20df258874a0205065bd119f7a49d7d1b51f017f1ceb55a2478498debbe74    3302457  create_dataset/data/intrasentence/df_intrasentence_fr.pkl
    81ca8c31ee9837a83729f5e1c042ad1aa12f6a91b423fc4c79e2c3bfdfd0c6c9    3242411  create_dataset/data/intrasentence/df_intrasentence_tr.pkl
    3d8b5310806b6a4634e239d0df0ae7fe2b39b6138f5703ff6a56ab9109b2297b    1230048  results/predictions/gpt2_GPT2LM_GPT2LM_d_en.json
"""
    ),
    mirror_files=parse_pins(
        """
    8f35bf9eb93e3609f403480d077434faa379c1ccaa14821b6db1d780c7ca38ca    1319983  create_dataset/data/intersentence/df_intersentence_de.jsonl
    38b040dd52b9c80dc66e196ad99c504cc96723eb83307b739e465fbdc022c0fe    1194874  create_dataset/data/intersentence/df_intersentence_en.jsonl
    72360b058c9c4bd40079f1c88672f18d7dc6db0d70894e89fab99d47a16a904d    1298316  create_dataset/data/intersentence/df_intersentence_es.jsonl
    4b5827d5d5a4f45a2699ad48d9052106c67234e1327f2001f3622ff106de3ab0    1341147  create_dataset/data/intersentence/df_intersentence_fr.jsonl
    d685451b5e42037d5b912ead1e95e0969e341bf79ff5ced5365956a3ec8606f7    1277331  create_dataset/data/intersentence/df_intersentence_tr.jsonl
    a036d7b0a0f8100e5fd9ad4df0a198b90819adf08e6e321746ef4e37aba797e2    1474302  create_dataset/data/intrasentence/df_intrasentence_de.jsonl
    31ace68fc0db2c94098b85410cf69ba895aa9706f38cd20b29d7becfe069b8ab    1341533  create_dataset/data/intrasentence/df_intrasentence_en.jsonl
    017ee1b95a81e668f3ca9b5a23f745b4bd52a8d770c12bf7df8f0adb3ad3b874    1447234  create_dataset/data/intrasentence/df_intrasentence_es.jsonl
    4d586738e7eb1d801ffe7e3d6295a0a703807cdc6f193dd892ad6fe4f39b7737    1490025  create_dataset/data/intrasentence/df_intrasentence_fr.jsonl
    6cd37a564e0b815e133b0e63cc0abe08f316133c9e997253112eba3ab4db4efc    1430156  create_dataset/data/intrasentence/df_intrasentence_tr.jsonl
"""
    ),
    mirror_converter=mirror_copies,
)
