// Written by ch03_qkv_projections: every number of chapter 03's interactive walk, as the program
// printed it. Read by docs/token_walk.js; rebuilt with the book.
window.attnTokenWalks = {
 "sentence": "Why did my Nimbus export fail?",
 "palette": [
  [
   0.0,
   "#f7fbff"
  ],
  [
   0.5,
   "#6baed6"
  ],
  [
   1.0,
   "#08306b"
  ]
 ],
 "walks": [
  {
   "token": "why",
   "x": [
    "-1.0",
    "1.5"
   ],
   "w_q": [
    [
     "0.20",
     "0.10"
    ],
    [
     "0.10",
     "0.14"
    ]
   ],
   "q": [
    "-0.05",
    "0.11"
   ],
   "k": "[-0.45, 0.40]",
   "v": "[-1.10, 1.15]",
   "root": "√2",
   "root_value": "1.414",
   "top": "0.05",
   "exp_sum": "5.824",
   "keys": [
    {
     "token": "why",
     "k": [
      "-0.45",
      "0.40"
     ],
     "score": "0.05",
     "shifted": "0.00",
     "weight": {
      "text": "0.17",
      "value": 0.17171487096089208,
      "colour": "#c7e1f1",
      "ink": "#000000"
     },
     "value": "[-1.10, 1.15]",
     "raw_score": "3.25",
     "raw_weight": {
      "text": "0.64",
      "value": 0.6355409427628481,
      "colour": "#508cb9",
      "ink": "#ffffff"
     }
    },
    {
     "token": "did",
     "k": [
      "-0.55",
      "0.00"
     ],
     "score": "0.02",
     "shifted": "-0.03",
     "weight": {
      "text": "0.17",
      "value": 0.16704416020498566,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[-0.90, 0.25]",
     "raw_score": "1.75",
     "raw_weight": {
      "text": "0.14",
      "value": 0.14180835233955835,
      "colour": "#cfe5f3",
      "ink": "#000000"
     }
    },
    {
     "token": "my",
     "k": [
      "-0.20",
      "0.30"
     ],
     "score": "0.03",
     "shifted": "-0.02",
     "weight": {
      "text": "0.17",
      "value": 0.168885059956052,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[-0.60, 0.80]",
     "raw_score": "2.00",
     "raw_weight": {
      "text": "0.18",
      "value": 0.18208552870260347,
      "colour": "#c4dff0",
      "ink": "#000000"
     }
    },
    {
     "token": "Nimbus",
     "k": [
      "0.55",
      "0.00"
     ],
     "score": "-0.02",
     "shifted": "-0.07",
     "weight": {
      "text": "0.16",
      "value": 0.16067237227879014,
      "colour": "#cae2f2",
      "ink": "#000000"
     },
     "value": "[0.90, -0.25]",
     "raw_score": "-1.75",
     "raw_weight": {
      "text": "0.00",
      "value": 0.004282241188084881,
      "colour": "#f6faff",
      "ink": "#000000"
     }
    },
    {
     "token": "export",
     "k": [
      "0.95",
      "0.50"
     ],
     "score": "0.01",
     "shifted": "-0.04",
     "weight": {
      "text": "0.16",
      "value": 0.16469842498448406,
      "colour": "#c9e2f1",
      "ink": "#000000"
     },
     "value": "[1.10, 0.75]",
     "raw_score": "-0.75",
     "raw_weight": {
      "text": "0.01",
      "value": 0.011640338406650004,
      "colour": "#f4f9fe",
      "ink": "#000000"
     }
    },
    {
     "token": "fail",
     "k": [
      "1.00",
      "0.70"
     ],
     "score": "0.02",
     "shifted": "-0.03",
     "weight": {
      "text": "0.17",
      "value": 0.16698511161479612,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[1.00, 1.20]",
     "raw_score": "0.00",
     "raw_weight": {
      "text": "0.02",
      "value": 0.024642596600255213,
      "colour": "#f0f7fd",
      "ink": "#000000"
     }
    }
   ],
   "weight_sum": "1.00",
   "output": "[0.052, 0.658]"
  },
  {
   "token": "did",
   "x": [
    "-1.0",
    "0.5"
   ],
   "w_q": [
    [
     "0.20",
     "0.10"
    ],
    [
     "0.10",
     "0.14"
    ]
   ],
   "q": [
    "-0.15",
    "-0.03"
   ],
   "k": "[-0.55, 0.00]",
   "v": "[-0.90, 0.25]",
   "root": "√2",
   "root_value": "1.414",
   "top": "0.06",
   "exp_sum": "5.508",
   "keys": [
    {
     "token": "why",
     "k": [
      "-0.45",
      "0.40"
     ],
     "score": "0.04",
     "shifted": "-0.02",
     "weight": {
      "text": "0.18",
      "value": 0.17811367676731438,
      "colour": "#c5e0f0",
      "ink": "#000000"
     },
     "value": "[-1.10, 1.15]",
     "raw_score": "1.75",
     "raw_weight": {
      "text": "0.45",
      "value": 0.4459509240655531,
      "colour": "#7ab6da",
      "ink": "#000000"
     }
    },
    {
     "token": "did",
     "k": [
      "-0.55",
      "0.00"
     ],
     "score": "0.06",
     "shifted": "0.00",
     "weight": {
      "text": "0.18",
      "value": 0.18154687105054984,
      "colour": "#c4dff0",
      "ink": "#000000"
     },
     "value": "[-0.90, 0.25]",
     "raw_score": "1.25",
     "raw_weight": {
      "text": "0.27",
      "value": 0.2704829081729384,
      "colour": "#abd1e9",
      "ink": "#000000"
     }
    },
    {
     "token": "my",
     "k": [
      "-0.20",
      "0.30"
     ],
     "score": "0.01",
     "shifted": "-0.04",
     "weight": {
      "text": "0.17",
      "value": 0.17382113244385097,
      "colour": "#c6e0f1",
      "ink": "#000000"
     },
     "value": "[-0.60, 0.80]",
     "raw_score": "1.00",
     "raw_weight": {
      "text": "0.21",
      "value": 0.2106523006925153,
      "colour": "#bcdbee",
      "ink": "#000000"
     }
    },
    {
     "token": "Nimbus",
     "k": [
      "0.55",
      "0.00"
     ],
     "score": "-0.06",
     "shifted": "-0.12",
     "weight": {
      "text": "0.16",
      "value": 0.16155428951679032,
      "colour": "#cae2f2",
      "ink": "#000000"
     },
     "value": "[0.90, -0.25]",
     "raw_score": "-1.25",
     "raw_weight": {
      "text": "0.02",
      "value": 0.022202589145163792,
      "colour": "#f1f8fd",
      "ink": "#000000"
     }
    },
    {
     "token": "export",
     "k": [
      "0.95",
      "0.50"
     ],
     "score": "-0.11",
     "shifted": "-0.17",
     "weight": {
      "text": "0.15",
      "value": 0.1532098017856588,
      "colour": "#cce3f2",
      "ink": "#000000"
     },
     "value": "[1.10, 0.75]",
     "raw_score": "-1.25",
     "raw_weight": {
      "text": "0.02",
      "value": 0.022202589145163792,
      "colour": "#f1f8fd",
      "ink": "#000000"
     }
    },
    {
     "token": "fail",
     "k": [
      "1.00",
      "0.70"
     ],
     "score": "-0.12",
     "shifted": "-0.18",
     "weight": {
      "text": "0.15",
      "value": 0.15175422843583583,
      "colour": "#cde4f3",
      "ink": "#000000"
     },
     "value": "[1.00, 1.20]",
     "raw_score": "-1.00",
     "raw_weight": {
      "text": "0.03",
      "value": 0.028508688778665664,
      "colour": "#eff7fd",
      "ink": "#000000"
     }
    }
   ],
   "weight_sum": "1.00",
   "output": "[0.002, 0.646]"
  },
  {
   "token": "my",
   "x": [
    "-0.5",
    "1.0"
   ],
   "w_q": [
    [
     "0.20",
     "0.10"
    ],
    [
     "0.10",
     "0.14"
    ]
   ],
   "q": [
    "0.00",
    "0.09"
   ],
   "k": "[-0.20, 0.30]",
   "v": "[-0.60, 0.80]",
   "root": "√2",
   "root_value": "1.414",
   "top": "0.04",
   "exp_sum": "5.856",
   "keys": [
    {
     "token": "why",
     "k": [
      "-0.45",
      "0.40"
     ],
     "score": "0.03",
     "shifted": "-0.02",
     "weight": {
      "text": "0.17",
      "value": 0.1675309407321763,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[-1.10, 1.15]",
     "raw_score": "2.00",
     "raw_weight": {
      "text": "0.46",
      "value": 0.4609981227396244,
      "colour": "#76b4d9",
      "ink": "#000000"
     }
    },
    {
     "token": "did",
     "k": [
      "-0.55",
      "0.00"
     ],
     "score": "0.00",
     "shifted": "-0.04",
     "weight": {
      "text": "0.16",
      "value": 0.16332012157894152,
      "colour": "#c9e2f2",
      "ink": "#000000"
     },
     "value": "[-0.90, 0.25]",
     "raw_score": "1.00",
     "raw_weight": {
      "text": "0.17",
      "value": 0.169591731774537,
      "colour": "#c8e1f1",
      "ink": "#000000"
     }
    },
    {
     "token": "my",
     "k": [
      "-0.20",
      "0.30"
     ],
     "score": "0.02",
     "shifted": "-0.03",
     "weight": {
      "text": "0.17",
      "value": 0.16646816567032616,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[-0.60, 0.80]",
     "raw_score": "1.25",
     "raw_weight": {
      "text": "0.22",
      "value": 0.21776009405859556,
      "colour": "#bad9ed",
      "ink": "#000000"
     }
    },
    {
     "token": "Nimbus",
     "k": [
      "0.55",
      "0.00"
     ],
     "score": "0.00",
     "shifted": "-0.04",
     "weight": {
      "text": "0.16",
      "value": 0.16332012157894152,
      "colour": "#c9e2f2",
      "ink": "#000000"
     },
     "value": "[0.90, -0.25]",
     "raw_score": "-1.00",
     "raw_weight": {
      "text": "0.02",
      "value": 0.022951745054294617,
      "colour": "#f1f7fd",
      "ink": "#000000"
     }
    },
    {
     "token": "export",
     "k": [
      "0.95",
      "0.50"
     ],
     "score": "0.03",
     "shifted": "-0.01",
     "weight": {
      "text": "0.17",
      "value": 0.1686005008200255,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[1.10, 0.75]",
     "raw_score": "-0.25",
     "raw_weight": {
      "text": "0.05",
      "value": 0.048588844661231576,
      "colour": "#e9f4fb",
      "ink": "#000000"
     }
    },
    {
     "token": "fail",
     "k": [
      "1.00",
      "0.70"
     ],
     "score": "0.04",
     "shifted": "0.00",
     "weight": {
      "text": "0.17",
      "value": 0.17076014961958902,
      "colour": "#c7e1f1",
      "ink": "#000000"
     },
     "value": "[1.00, 1.20]",
     "raw_score": "0.25",
     "raw_weight": {
      "text": "0.08",
      "value": 0.08010946171171686,
      "colour": "#e1eff8",
      "ink": "#000000"
     }
    }
   ],
   "weight_sum": "1.00",
   "output": "[0.072, 0.657]"
  },
  {
   "token": "Nimbus",
   "x": [
    "1.0",
    "-0.5"
   ],
   "w_q": [
    [
     "0.20",
     "0.10"
    ],
    [
     "0.10",
     "0.14"
    ]
   ],
   "q": [
    "0.15",
    "0.03"
   ],
   "k": "[0.55, 0.00]",
   "v": "[0.90, -0.25]",
   "root": "√2",
   "root_value": "1.414",
   "top": "0.12",
   "exp_sum": "5.491",
   "keys": [
    {
     "token": "why",
     "k": [
      "-0.45",
      "0.40"
     ],
     "score": "-0.04",
     "shifted": "-0.16",
     "weight": {
      "text": "0.16",
      "value": 0.1551703380552539,
      "colour": "#cce3f2",
      "ink": "#000000"
     },
     "value": "[-1.10, 1.15]",
     "raw_score": "-1.75",
     "raw_weight": {
      "text": "0.02",
      "value": 0.016507254182264074,
      "colour": "#f2f8fe",
      "ink": "#000000"
     }
    },
    {
     "token": "did",
     "k": [
      "-0.55",
      "0.00"
     ],
     "score": "-0.06",
     "shifted": "-0.18",
     "weight": {
      "text": "0.15",
      "value": 0.15223594478008323,
      "colour": "#cce4f3",
      "ink": "#000000"
     },
     "value": "[-0.90, 0.25]",
     "raw_score": "-1.25",
     "raw_weight": {
      "text": "0.03",
      "value": 0.02721586109115243,
      "colour": "#eff7fd",
      "ink": "#000000"
     }
    },
    {
     "token": "my",
     "k": [
      "-0.20",
      "0.30"
     ],
     "score": "-0.01",
     "shifted": "-0.14",
     "weight": {
      "text": "0.16",
      "value": 0.1590022976359116,
      "colour": "#cae3f2",
      "ink": "#000000"
     },
     "value": "[-0.60, 0.80]",
     "raw_score": "-1.00",
     "raw_weight": {
      "text": "0.03",
      "value": 0.03494585737808269,
      "colour": "#edf6fc",
      "ink": "#000000"
     }
    },
    {
     "token": "Nimbus",
     "k": [
      "0.55",
      "0.00"
     ],
     "score": "0.06",
     "shifted": "-0.06",
     "weight": {
      "text": "0.17",
      "value": 0.1710753674131072,
      "colour": "#c7e1f1",
      "ink": "#000000"
     },
     "value": "[0.90, -0.25]",
     "raw_score": "1.25",
     "raw_weight": {
      "text": "0.33",
      "value": 0.3315570633783091,
      "colour": "#9ac8e4",
      "ink": "#000000"
     }
    },
    {
     "token": "export",
     "k": [
      "0.95",
      "0.50"
     ],
     "score": "0.11",
     "shifted": "-0.01",
     "weight": {
      "text": "0.18",
      "value": 0.1803928933666661,
      "colour": "#c4dff0",
      "ink": "#000000"
     },
     "value": "[1.10, 0.75]",
     "raw_score": "1.25",
     "raw_weight": {
      "text": "0.33",
      "value": 0.3315570633783091,
      "colour": "#9ac8e4",
      "ink": "#000000"
     }
    },
    {
     "token": "fail",
     "k": [
      "1.00",
      "0.70"
     ],
     "score": "0.12",
     "shifted": "0.00",
     "weight": {
      "text": "0.18",
      "value": 0.18212315874897797,
      "colour": "#c4dff0",
      "ink": "#000000"
     },
     "value": "[1.00, 1.20]",
     "raw_score": "1.00",
     "raw_weight": {
      "text": "0.26",
      "value": 0.2582169005918825,
      "colour": "#afd3ea",
      "ink": "#000000"
     }
    }
   ],
   "weight_sum": "1.00",
   "output": "[0.131, 0.655]"
  },
  {
   "token": "export",
   "x": [
    "1.5",
    "0.5"
   ],
   "w_q": [
    [
     "0.20",
     "0.10"
    ],
    [
     "0.10",
     "0.14"
    ]
   ],
   "q": [
    "0.35",
    "0.22"
   ],
   "k": "[0.95, 0.50]",
   "v": "[1.10, 0.75]",
   "root": "√2",
   "root_value": "1.414",
   "top": "0.36",
   "exp_sum": "4.736",
   "keys": [
    {
     "token": "why",
     "k": [
      "-0.45",
      "0.40"
     ],
     "score": "-0.05",
     "shifted": "-0.41",
     "weight": {
      "text": "0.14",
      "value": 0.1407660680454422,
      "colour": "#d0e5f3",
      "ink": "#000000"
     },
     "value": "[-1.10, 1.15]",
     "raw_score": "-0.75",
     "raw_weight": {
      "text": "0.01",
      "value": 0.014378124565782541,
      "colour": "#f3f9fe",
      "ink": "#000000"
     }
    },
    {
     "token": "did",
     "k": [
      "-0.55",
      "0.00"
     ],
     "score": "-0.14",
     "shifted": "-0.49",
     "weight": {
      "text": "0.13",
      "value": 0.12904036812349953,
      "colour": "#d3e7f4",
      "ink": "#000000"
     },
     "value": "[-0.90, 0.25]",
     "raw_score": "-1.25",
     "raw_weight": {
      "text": "0.01",
      "value": 0.008720773378314504,
      "colour": "#f5fafe",
      "ink": "#000000"
     }
    },
    {
     "token": "my",
     "k": [
      "-0.20",
      "0.30"
     ],
     "score": "0.00",
     "shifted": "-0.36",
     "weight": {
      "text": "0.15",
      "value": 0.1474390566068416,
      "colour": "#cee4f3",
      "ink": "#000000"
     },
     "value": "[-0.60, 0.80]",
     "raw_score": "-0.25",
     "raw_weight": {
      "text": "0.02",
      "value": 0.02370551980438172,
      "colour": "#f0f7fd",
      "ink": "#000000"
     }
    },
    {
     "token": "Nimbus",
     "k": [
      "0.55",
      "0.00"
     ],
     "score": "0.14",
     "shifted": "-0.22",
     "weight": {
      "text": "0.17",
      "value": 0.1694167062280572,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[0.90, -0.25]",
     "raw_score": "1.25",
     "raw_weight": {
      "text": "0.11",
      "value": 0.10624076901398008,
      "colour": "#d9ebf6",
      "ink": "#000000"
     }
    },
    {
     "token": "export",
     "k": [
      "0.95",
      "0.50"
     ],
     "score": "0.31",
     "shifted": "-0.04",
     "weight": {
      "text": "0.20",
      "value": 0.20217589637930233,
      "colour": "#bedcee",
      "ink": "#000000"
     },
     "value": "[1.10, 0.75]",
     "raw_score": "2.50",
     "raw_weight": {
      "text": "0.37",
      "value": 0.37081671992327564,
      "colour": "#8fc2e1",
      "ink": "#000000"
     }
    },
    {
     "token": "fail",
     "k": [
      "1.00",
      "0.70"
     ],
     "score": "0.36",
     "shifted": "0.00",
     "weight": {
      "text": "0.21",
      "value": 0.211161904616857,
      "colour": "#bcdaee",
      "ink": "#000000"
     },
     "value": "[1.00, 1.20]",
     "raw_score": "2.75",
     "raw_weight": {
      "text": "0.48",
      "value": 0.47613809331426554,
      "colour": "#72b2d8",
      "ink": "#000000"
     }
    }
   ],
   "weight_sum": "1.00",
   "output": "[0.227, 0.675]"
  },
  {
   "token": "fail",
   "x": [
    "1.5",
    "1.0"
   ],
   "w_q": [
    [
     "0.20",
     "0.10"
    ],
    [
     "0.10",
     "0.14"
    ]
   ],
   "q": [
    "0.40",
    "0.29"
   ],
   "k": "[1.00, 0.70]",
   "v": "[1.00, 1.20]",
   "root": "√2",
   "root_value": "1.414",
   "top": "0.43",
   "exp_sum": "4.548",
   "keys": [
    {
     "token": "why",
     "k": [
      "-0.45",
      "0.40"
     ],
     "score": "-0.05",
     "shifted": "-0.47",
     "weight": {
      "text": "0.14",
      "value": 0.13719886874104717,
      "colour": "#d1e6f4",
      "ink": "#000000"
     },
     "value": "[-1.10, 1.15]",
     "raw_score": "0.00",
     "raw_weight": {
      "text": "0.02",
      "value": 0.02136607939104824,
      "colour": "#f1f8fd",
      "ink": "#000000"
     }
    },
    {
     "token": "did",
     "k": [
      "-0.55",
      "0.00"
     ],
     "score": "-0.16",
     "shifted": "-0.58",
     "weight": {
      "text": "0.12",
      "value": 0.12286949945144009,
      "colour": "#d5e8f5",
      "ink": "#000000"
     },
     "value": "[-0.90, 0.25]",
     "raw_score": "-1.00",
     "raw_weight": {
      "text": "0.01",
      "value": 0.007860141346403497,
      "colour": "#f5fafe",
      "ink": "#000000"
     }
    },
    {
     "token": "my",
     "k": [
      "-0.20",
      "0.30"
     ],
     "score": "0.00",
     "shifted": "-0.42",
     "weight": {
      "text": "0.14",
      "value": 0.14426271562179935,
      "colour": "#cfe5f3",
      "ink": "#000000"
     },
     "value": "[-0.60, 0.80]",
     "raw_score": "0.25",
     "raw_weight": {
      "text": "0.03",
      "value": 0.027434588993074084,
      "colour": "#eff7fd",
      "ink": "#000000"
     }
    },
    {
     "token": "Nimbus",
     "k": [
      "0.55",
      "0.00"
     ],
     "score": "0.16",
     "shifted": "-0.27",
     "weight": {
      "text": "0.17",
      "value": 0.16771226383925367,
      "colour": "#c8e1f1",
      "ink": "#000000"
     },
     "value": "[0.90, -0.25]",
     "raw_score": "1.00",
     "raw_weight": {
      "text": "0.06",
      "value": 0.05807902535409973,
      "colour": "#e7f2fa",
      "ink": "#000000"
     }
    },
    {
     "token": "export",
     "k": [
      "0.95",
      "0.50"
     ],
     "score": "0.37",
     "shifted": "-0.06",
     "weight": {
      "text": "0.21",
      "value": 0.20807890610730262,
      "colour": "#bddbee",
      "ink": "#000000"
     },
     "value": "[1.10, 0.75]",
     "raw_score": "2.75",
     "raw_weight": {
      "text": "0.33",
      "value": 0.334221714722507,
      "colour": "#99c8e4",
      "ink": "#000000"
     }
    },
    {
     "token": "fail",
     "k": [
      "1.00",
      "0.70"
     ],
     "score": "0.43",
     "shifted": "0.00",
     "weight": {
      "text": "0.22",
      "value": 0.21987774623915715,
      "colour": "#b9d9ed",
      "ink": "#000000"
     },
     "value": "[1.00, 1.20]",
     "raw_score": "3.25",
     "raw_weight": {
      "text": "0.55",
      "value": 0.5510384501928675,
      "colour": "#61a1cb",
      "ink": "#000000"
     }
    }
   ],
   "weight_sum": "1.00",
   "output": "[0.252, 0.682]"
  }
 ]
};
