"""English half of the pooljudge demo collection (hand-written for pooljudge, Apache-2.0).

``DOCUMENTS`` is a list of ``(slug, title, passages)``; passage ``i`` of
document ``slug`` gets the id ``en-{slug}-{i}`` and the document id
``en-{slug}``.  ``QUERIES`` and ``QRELS`` (grades 0-3) refer to those ids.

Deliberate retrieval traps (see README.md):

* near duplicates: ``en-paris-2`` / ``en-eiffel-0``;
* words shared with a query but no answer: ``en-eiffel-4``, ``en-canberra-3``;
* numbers and years that differ from the query: Euro 2016 vs Women's Euro
  2017 (``en-euro-1`` / ``en-euro-2``), Deep Blue 1996 vs 1997, Tokyo 2020
  held in 2021, Apollo 11 vs Apollo 12 in 1969;
* entity swap: Edison vs Tesla, Sydney vs Canberra;
* "from A to B" vs "from B to A": Celsius/Fahrenheit conversions and
  jet-lag advice for eastward vs westward flights;
* passages that only make sense with their title or earlier passages
  (``en-great-wall-1`` .. ``-4`` say "it", never "Great Wall");
* acronyms expanded once and used alone later (DNA, ISS, XSS, 2FA);
* literal HTML-like text (``en-html-1``, ``en-html-2``) to check escaping.
"""

from __future__ import annotations

DOCUMENTS: list[tuple[str, str, list[str]]] = [
    (
        "paris",
        "Paris",
        [
            "Paris is the capital and largest city of France, situated on the river Seine in the north of the "
            "country. The city proper has a little over two million inhabitants, while the wider metropolitan "
            "area is home to more than twelve million people.",
            "The city is divided into twenty administrative districts called arrondissements, which spiral "
            "outwards clockwise from the centre. The first arrondissement contains the Louvre and the Tuileries "
            "Garden, while the eighteenth includes the hill of Montmartre.",
            "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. It was designed by "
            "the company of the engineer Gustave Eiffel and built for the 1889 World's Fair, and at 330 metres "
            "it is still the tallest structure in the city.",
            "The Paris Métro opened in 1900, in time for that year's World's Fair, and now has sixteen lines. "
            "Most central stations lie only a few hundred metres apart, so the metro is often the quickest way "
            "to cross the city.",
            "Paris hosted the Summer Olympic Games in 1900, 1924 and 2024. During the 2024 Games several events "
            "were held at landmarks: beach volleyball was played in front of the Eiffel Tower and fencing took "
            "place under the glass roof of the Grand Palais.",
        ],
    ),
    (
        "eiffel",
        "Eiffel Tower",
        [
            "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It was built "
            "by the company of the engineer Gustave Eiffel for the 1889 World's Fair, and at 330 metres it "
            "remains the tallest structure in Paris.",
            "Construction began in January 1887 and was finished in March 1889, taking just over two years. "
            "Around 300 workers assembled some 18,000 iron parts, held together by about 2.5 million rivets.",
            "At first many artists and writers protested against the tower, calling it useless and monstrous. "
            "It was only meant to stand for twenty years, but it was kept because it proved valuable as a mast "
            "for radio transmission.",
            "Visitors can climb 674 steps to the second floor or take a lift; the top floor can only be reached "
            "by lift. The tower is repainted roughly every seven years, a job that needs about 60 tonnes of "
            "paint.",
            "Every evening after sunset the Eiffel Tower sparkles for five minutes at the start of each hour. "
            "The effect comes from 20,000 light bulbs that were installed on the tower in 2000.",
        ],
    ),
    (
        "tokyo",
        "Tokyo",
        [
            "Tokyo is the capital of Japan and the centre of the most populous metropolitan area in the world, "
            "with around 37 million people in the Greater Tokyo Area. Until 1868 the city was called Edo and "
            "was the seat of the Tokugawa shogunate.",
            "The city was largely destroyed twice in the twentieth century: first by the Great Kanto earthquake "
            "of 1923 and then by air raids during the Second World War. Each time it was rebuilt, which is one "
            "reason why few old wooden buildings survive.",
            "Tokyo hosted the Summer Olympics in 1964 and again in 2021. The 2020 Games were postponed by one "
            "year because of the COVID-19 pandemic, but they kept the name Tokyo 2020.",
            "Shinjuku Station is often described as the busiest railway station in the world, used by more "
            "than three million passengers a day before the pandemic. The Yamanote Line loops around central "
            "Tokyo and links most of the major districts.",
            "Cherry blossom season in Tokyo usually peaks in late March or early April. Popular viewing spots "
            "include Ueno Park, the moat at Chidorigafuchi and the banks of the Meguro River.",
        ],
    ),
    (
        "canberra",
        "Canberra",
        [
            "Canberra is the capital city of Australia. The site was chosen in 1908 as a compromise between "
            "the two largest cities, Sydney and Melbourne, which both wanted to be the national capital.",
            "The city was designed by the American architects Walter Burley Griffin and Marion Mahony Griffin, "
            "who won an international competition in 1912. Their plan placed a large artificial lake at the "
            "heart of the city, now called Lake Burley Griffin.",
            "Parliament moved from Melbourne to Canberra in 1927. The current Parliament House, partly built "
            "into a hill so that people can walk over its grass roof, was opened in 1988.",
            "Sydney is the largest city in Australia, with a population of more than five million. It is famous "
            "for the Sydney Opera House and the Harbour Bridge, and it is the capital of the state of New "
            "South Wales.",
            "With around 450,000 inhabitants, Canberra is the largest inland city in Australia. Winters are "
            "cold by Australian standards, with frequent frosts in the early morning.",
        ],
    ),
    (
        "great-wall",
        "Great Wall of China",
        [
            "The Great Wall of China is a series of fortifications built across the historical northern borders "
            "of ancient Chinese states to protect against raids by nomadic peoples from the steppe. The best-known "
            "sections near Beijing were built during the Ming dynasty.",
            "Its total length, including all of its branches as well as the trenches and natural barriers "
            "between them, was measured at about 21,196 kilometres in a survey published in 2012. Only a "
            "fraction of this is the brick-and-stone wall seen on postcards.",
            "It was not built in one go. The earliest walls were made of rammed earth in the 7th century BC, "
            "and Qin Shi Huang linked several of them after unifying China in 221 BC; most of what survives "
            "today dates from the 14th to the 17th century.",
            "A popular claim says that it is the only man-made structure visible from the Moon with the naked "
            "eye. This is a myth: it is far too narrow, and even from low Earth orbit astronauts have great "
            "difficulty spotting it.",
            "It was listed as a UNESCO World Heritage Site in 1987. The most visited section is Badaling, about "
            "70 kilometres north-west of central Beijing, while Mutianyu and Jinshanling are quieter "
            "alternatives.",
        ],
    ),
    (
        "photosynthesis",
        "Photosynthesis",
        [
            "Photosynthesis is the process by which plants, algae and some bacteria use the energy of sunlight "
            "to turn carbon dioxide and water into sugar. Oxygen is released as a by-product.",
            "In plants, photosynthesis takes place in chloroplasts, small structures in leaf cells that contain "
            "the pigment chlorophyll. Chlorophyll absorbs mainly red and blue light and reflects green light, "
            "which is why leaves look green.",
            "The process has two stages. In the light-dependent reactions water is split and energy is stored "
            "in ATP and NADPH; in the Calvin cycle that energy is used to fix carbon dioxide into sugars.",
            "The overall equation is usually written as 6 CO2 + 6 H2O + light energy → C6H12O6 + 6 O2. In "
            "words: six molecules of carbon dioxide and six of water produce one molecule of glucose and six "
            "of oxygen.",
            "Plants also respire, just like animals, taking in oxygen and releasing carbon dioxide day and "
            "night. In daylight, however, photosynthesis usually outweighs respiration, so a plant absorbs more "
            "carbon dioxide than it gives off.",
        ],
    ),
    (
        "dna",
        "DNA",
        [
            "Deoxyribonucleic acid (DNA) is the molecule that carries the genetic instructions of all known "
            "living organisms. It consists of two strands that wind around each other to form a double helix.",
            "Each strand is a chain of nucleotides, and each nucleotide carries one of four bases: adenine, "
            "thymine, guanine or cytosine. Adenine pairs with thymine and guanine pairs with cytosine, which "
            "holds the two strands together.",
            "The double-helix structure was described in 1953 by James Watson and Francis Crick, using X-ray "
            "diffraction images produced by Rosalind Franklin and Maurice Wilkins. Watson, Crick and Wilkins "
            "received the Nobel Prize in 1962.",
            "Before a cell divides, its DNA is duplicated in a process called replication. The enzyme helicase "
            "unzips the helix, and DNA polymerase builds a new strand alongside each old one, so every copy "
            "keeps one original strand.",
            "The human genome contains about three billion base pairs of DNA, packed into 23 pairs of "
            "chromosomes. Only around one to two percent of it codes for proteins.",
        ],
    ),
    (
        "iss",
        "International Space Station",
        [
            "The International Space Station (ISS) is a modular space station in low Earth orbit, run jointly by "
            "the space agencies of the United States, Russia, Europe, Japan and Canada. Its first module was "
            "launched in 1998, and it has been continuously occupied since November 2000.",
            "The ISS orbits at an altitude of roughly 400 kilometres and circles the Earth about every 90 "
            "minutes, so its crew sees around sixteen sunrises and sunsets every day.",
            "Most of the breathable air on the ISS is produced on board by electrolysis, which splits water into "
            "hydrogen and O2. The water is itself recycled from cabin humidity, washing water and even urine, "
            "with a recovery rate above 90 percent.",
            "Astronauts on the ISS exercise for about two hours a day on a treadmill, a stationary bike and a "
            "resistance machine. Without this training their bones and muscles would weaken quickly in "
            "microgravity.",
            "Including its solar arrays, the station is about the size of a football field. It can often be "
            "seen from the ground as a bright, fast-moving point of light shortly after sunset or before "
            "sunrise.",
        ],
    ),
    (
        "temperature",
        "Temperature scales",
        [
            "The Celsius scale sets the freezing point of water at 0 degrees and its boiling point at 100 "
            "degrees at standard atmospheric pressure. The Fahrenheit scale, still used for everyday "
            "temperatures in the United States, puts these points at 32 and 212 degrees.",
            "To convert a temperature from Celsius to Fahrenheit, multiply it by 9/5 and then add 32. For "
            "example, 20 °C becomes 20 × 9/5 + 32 = 68 °F.",
            "To convert a temperature from Fahrenheit to Celsius, first subtract 32 and then multiply by 5/9. "
            "For example, 68 °F becomes (68 − 32) × 5/9 = 20 °C.",
            "A quick mental rule for going from Celsius to Fahrenheit is to double the number and add 30, which "
            "gives 50 °F for 10 °C. The rule works well for mild weather but drifts away from the exact value at "
            "high temperatures.",
            "The Kelvin scale starts at absolute zero, the lowest possible temperature, and uses steps of the "
            "same size as Celsius. To get kelvins, add 273.15 to the temperature in degrees Celsius.",
            "The two scales meet at minus 40: −40 °C is exactly the same temperature as −40 °F. Normal human "
            "body temperature is about 37 °C, which is 98.6 °F.",
        ],
    ),
    (
        "sourdough",
        "Sourdough bread",
        [
            "Sourdough bread is leavened by a starter, a fermented mixture of flour and water containing wild "
            "yeasts and lactic acid bacteria, instead of commercial baker's yeast. The bacteria produce the "
            "acids that give the bread its slightly sour taste.",
            "To make a starter, mix equal weights of flour and water in a jar and leave it at room temperature. "
            "Every day discard about half and feed it with fresh flour and water; after five to ten days it "
            "should double in size within a few hours of feeding.",
            "A typical dough uses 1,000 grams of flour, 700 to 750 grams of water, 200 grams of active starter "
            "and 20 grams of salt. After mixing, the dough is folded several times over a few hours and then "
            "left to rise slowly, often overnight in the fridge.",
            "Bake the loaf in a preheated cast-iron pot at about 250 °C for 20 minutes with the lid on, then "
            "remove the lid and bake for another 20 to 25 minutes until the crust is deep brown. Steam trapped "
            "under the lid helps the bread rise and gives a crisp crust.",
            "Because the long fermentation breaks down part of the starch and gluten, some people find sourdough "
            "easier to digest than ordinary bread. It is not gluten-free, however, and is unsuitable for people "
            "with coeliac disease.",
        ],
    ),
    (
        "pasta",
        "Cooking pasta",
        [
            "Dried pasta should be cooked in plenty of boiling water, roughly one litre for every 100 grams of "
            "pasta. Salt the water once it boils, using about 10 grams of salt per litre.",
            "Adding oil to the cooking water does not stop pasta from sticking; stirring during the first two "
            "minutes does. The oil mostly floats on the surface and only makes it harder for the sauce to cling "
            "to the pasta afterwards.",
            "Cook the pasta al dente, which means that it is still slightly firm when you bite into it. Start "
            "tasting one or two minutes before the time printed on the packet.",
            "Keep a cup of the starchy cooking water before draining. A splash of it helps the sauce emulsify "
            "and coat the pasta evenly, which is the secret of dishes such as cacio e pepe and carbonara.",
            "Fresh egg pasta cooks much faster than dried pasta, usually in two to four minutes. It is ready "
            "shortly after it rises to the surface of the water.",
        ],
    ),
    (
        "coffee",
        "Brewing coffee",
        [
            "A good starting ratio for filter coffee is about 60 grams of ground coffee per litre of water, or "
            "roughly 1 to 16. Adjust it to taste: more coffee makes a stronger cup.",
            "The ideal water temperature for brewing coffee is between 90 and 96 °C, just off the boil. Water "
            "that is too hot extracts bitter compounds, while water that is too cool gives a sour, thin cup.",
            "Espresso is made by forcing hot water through finely ground, tightly packed coffee at about 9 bar "
            "of pressure. A single shot takes 25 to 30 seconds and yields about 30 millilitres.",
            "Cold brew is made by steeping coarse coffee grounds in cold water for 12 to 24 hours and then "
            "filtering them out. It tastes less acidic than coffee brewed with hot water.",
            "An ordinary mug of filter coffee contains roughly 80 to 100 milligrams of caffeine. Health "
            "agencies consider up to about 400 milligrams a day safe for most healthy adults.",
        ],
    ),
    (
        "rome",
        "Ancient Rome",
        [
            "According to legend, Rome was founded in 753 BC by Romulus, who killed his twin brother Remus. The "
            "city grew from a small settlement on the Palatine Hill into the capital of an empire that "
            "surrounded the Mediterranean.",
            "The Roman Republic was established in 509 BC after the last king was expelled. It was governed by "
            "two consuls elected every year and by the Senate.",
            "Julius Caesar was assassinated on the Ides of March, 15 March 44 BC, by a group of senators. His "
            "adopted heir Octavian defeated his rivals and in 27 BC took the name Augustus, becoming the first "
            "Roman emperor.",
            "The Colosseum in Rome was completed in AD 80 under the emperor Titus. It could hold around 50,000 "
            "spectators, who came to watch gladiator fights and other public spectacles.",
            "The Western Roman Empire ended in AD 476, when the Germanic leader Odoacer deposed the emperor "
            "Romulus Augustulus. The Eastern Roman Empire, known as the Byzantine Empire, lasted until the fall "
            "of Constantinople in 1453.",
        ],
    ),
    (
        "french-revolution",
        "French Revolution",
        [
            "The French Revolution began in 1789 and overturned the absolute monarchy of King Louis XVI. Its "
            "causes included a state debt crisis, poor harvests and high bread prices, and widespread anger at "
            "the privileges of the nobility and the clergy.",
            "On 14 July 1789 a crowd in Paris stormed the Bastille, a royal fortress used as a prison. The "
            "anniversary is celebrated every year as France's national day.",
            "In August 1789 the National Assembly adopted the Declaration of the Rights of Man and of the "
            "Citizen, which stated that men are born and remain free and equal in rights.",
            "Louis XVI was executed by guillotine in January 1793. During the Reign of Terror that followed, led "
            "by Robespierre and the Committee of Public Safety, thousands of suspected enemies of the "
            "Revolution were put to death.",
            "The revolutionary period ended in 1799, when Napoleon Bonaparte seized power in a coup. He crowned "
            "himself Emperor of the French in 1804.",
        ],
    ),
    (
        "euro",
        "European football championships",
        [
            "The UEFA European Championship, often called the Euros, is a football tournament for men's "
            "national teams in Europe, held every four years. The first edition took place in 1960 and was won "
            "by the Soviet Union.",
            "Portugal won Euro 2016, which was held in France. In the final at the Stade de France on 10 July "
            "2016, Portugal beat the hosts 1–0 after extra time with a goal by Éder.",
            "The Netherlands won the UEFA Women's Euro 2017 on home soil. In the final in Enschede they beat "
            "Denmark 4–2, ending Germany's run of six consecutive titles.",
            "Euro 2020 was postponed to 2021 because of the COVID-19 pandemic and was played in eleven cities "
            "across the continent. Italy won it by beating England on penalties at Wembley Stadium.",
            "Spain is the most successful team in the men's tournament, with four titles: 1964, 2008, 2012 and "
            "2024. In 2024 they beat England 2–1 in the final in Berlin.",
        ],
    ),
    (
        "marathon",
        "Marathon",
        [
            "The marathon is a long-distance running race over 42.195 kilometres. Its name recalls the legend "
            "of a Greek messenger who ran from the battlefield of Marathon to Athens to announce a victory over "
            "the Persians and then collapsed.",
            "The distance was fixed at 42.195 kilometres after the 1908 London Olympics, where the course ran "
            "from Windsor Castle to the White City Stadium. It became the official standard in 1921.",
            "Eliud Kipchoge of Kenya won the 2022 Berlin Marathon in 2:01:09, a world record at the time. His "
            "run of 1:59:40 in Vienna in 2019 was not recognised as a record because it was not an open race "
            "and used rotating pacemakers.",
            "Most beginners train for sixteen to twenty weeks before their first marathon, slowly building up a "
            "weekly long run to about 30 to 32 kilometres. Tapering, or cutting back the mileage in the last "
            "two or three weeks, lets the legs recover before race day.",
            "The Boston Marathon, first held in 1897, is the world's oldest annual marathon. Runners usually "
            "have to meet a qualifying time for their age group to enter.",
        ],
    ),
    (
        "tennis",
        "Tennis Grand Slam tournaments",
        [
            "The four Grand Slam tournaments are the Australian Open, the French Open, Wimbledon and the US "
            "Open. They are the most important events in tennis and offer the most ranking points and prize "
            "money.",
            "Wimbledon, held in London since 1877, is the oldest tennis tournament in the world and the only "
            "Grand Slam still played on grass. Players must wear almost entirely white clothing.",
            "The French Open, also called Roland Garros, is played on red clay in Paris. Clay slows the ball and "
            "makes it bounce high, which favours patient baseline players; Rafael Nadal won the singles title "
            "there fourteen times.",
            "Winning all four Grand Slam tournaments in one calendar year is called a calendar Grand Slam. In "
            "men's singles only Don Budge, in 1938, and Rod Laver, in 1962 and 1969, have done it; Steffi Graf "
            "achieved it in 1988 and also won Olympic gold that year.",
            "The US Open is played on hard courts in New York at the end of summer. In 1973 it became the first "
            "Grand Slam to pay equal prize money to men and women.",
        ],
    ),
    (
        "sleep",
        "Sleep",
        [
            "Most adults need seven to nine hours of sleep per night, while teenagers need about eight to ten. "
            "Regularly sleeping less than seven hours is linked to weight gain, high blood pressure and a weaker "
            "immune system.",
            "Sleep runs in cycles of about 90 minutes. Each cycle moves from light sleep to deep slow-wave sleep "
            "and then to REM sleep, the stage in which most vivid dreaming happens.",
            "To fall asleep more easily, keep a regular schedule, even at weekends, and keep the bedroom dark, "
            "quiet and cool. Avoid caffeine in the afternoon and bright screens in the hour before bed.",
            "A short nap of 10 to 20 minutes can improve alertness without leaving you groggy. Longer naps may "
            "reach deep sleep, and waking up from it causes a heavy feeling called sleep inertia.",
            "Insomnia means having trouble falling asleep or staying asleep on at least three nights a week. "
            "Cognitive behavioural therapy is the recommended first treatment for chronic insomnia, ahead of "
            "sleeping pills.",
        ],
    ),
    (
        "vitamin-d",
        "Vitamin D",
        [
            "Vitamin D helps the body absorb calcium and phosphate from food, which keeps bones, teeth and "
            "muscles healthy. A severe lack of it causes rickets in children and osteomalacia in adults.",
            "The skin makes vitamin D when it is exposed to ultraviolet B radiation in sunlight. In northern "
            "countries the sun is too low in winter for this to work, roughly from October to March.",
            "Few foods are naturally rich in vitamin D. The best sources are oily fish such as salmon, mackerel "
            "and sardines, egg yolks and red meat, together with fortified foods like some breakfast cereals.",
            "Many health authorities advise adults to take a supplement of 10 micrograms (400 IU) of vitamin D "
            "a day in autumn and winter. Taking far too much for a long time can raise the calcium level in the "
            "blood and harm the kidneys.",
        ],
    ),
    (
        "hydration",
        "Drinking water and hydration",
        [
            "The body loses water through breathing, sweating and urine, and it has to be replaced every day. A "
            "common guideline is about 2 litres of fluid a day for women and 2.5 litres for men, including the "
            "water contained in food.",
            "Thirst, dark yellow urine, headache and tiredness are early signs of dehydration. Older adults "
            "often feel less thirsty, so they are more at risk.",
            "During exercise lasting more than an hour, or in hot weather, sports drinks containing salts can "
            "help replace what is lost in sweat. For shorter workouts plain water is enough.",
            "Drinking far too much water in a short time can dilute the sodium in the blood, a dangerous "
            "condition called hyponatraemia. It has occurred in endurance athletes who drank very large amounts "
            "during long races.",
            "Tea and coffee count towards your daily fluid intake. Although caffeine has a mild diuretic effect, "
            "regular drinkers do not lose more fluid than they take in.",
        ],
    ),
    (
        "html",
        "HTML and web page security",
        [
            "HTML (HyperText Markup Language) describes the structure of web pages with elements written as "
            "tags. A paragraph is wrapped in <p> and </p>, a link uses the <a> element and an image uses "
            "<img>.",
            "In HTML, text written as <b>bold</b> is displayed in bold, and an ampersand that is meant "
            "literally should be written as &amp;. Likewise < and > must be escaped as &lt; and &gt; when they "
            "are to be shown rather than interpreted.",
            "Cross-site scripting (XSS) happens when a site displays user input without escaping it. If a "
            "comment containing <b>bold</b> & <script>alert(1)</script> is inserted into a page as raw HTML, "
            "the browser runs the script instead of showing the text.",
            "To prevent XSS, escape all untrusted text before inserting it into a page and use a Content "
            "Security Policy that blocks inline scripts. Modern template engines escape text by default.",
            "CSS (Cascading Style Sheets) controls how HTML elements look, including colours, fonts and layout. "
            "Keeping styles in separate CSS files separates presentation from content.",
        ],
    ),
    (
        "passwords",
        "Passwords and two-factor authentication",
        [
            "A strong password is long and hard to guess. Security guidance now favours passphrases made of "
            "several random words over short passwords full of symbols, because length adds more protection "
            "than complexity.",
            "Never reuse the same password on different sites. When one site is breached, attackers try the "
            "leaked email and password pairs on many other services, an attack known as credential stuffing.",
            "A password manager generates and stores a unique password for every account, so you only have to "
            "remember one master password. Most managers can also fill in login forms automatically.",
            "Two-factor authentication (2FA) adds a second step to logging in, such as a code from an app or a "
            "hardware security key. Even if someone steals your password, they cannot sign in without the "
            "second factor.",
            "Codes sent by text message are better than nothing, but they can be intercepted through SIM-swap "
            "fraud. Authenticator apps and hardware keys are safer ways to use 2FA.",
        ],
    ),
    (
        "lithium",
        "Lithium-ion batteries",
        [
            "Lithium-ion batteries store energy by moving lithium ions between a graphite anode and a metal-oxide "
            "cathode through an electrolyte. They power phones, laptops and most electric cars because they "
            "hold a lot of energy for their weight.",
            "The battery wears out slowly with every charge cycle. Heat, and keeping the battery at 100 percent "
            "for long periods, speed up this ageing, which is why many phones pause charging at 80 percent "
            "overnight.",
            "A damaged or overheated lithium-ion cell can go into thermal runaway, a chain reaction that leads to "
            "fire or explosion. Airlines therefore require spare batteries and power banks to be carried in the "
            "cabin, never in checked luggage.",
            "John Goodenough, M. Stanley Whittingham and Akira Yoshino received the 2019 Nobel Prize in Chemistry "
            "for developing the lithium-ion battery. Sony sold the first commercial lithium-ion batteries in "
            "1991.",
            "Electric car batteries usually come with an eight-year warranty, and many still hold more than 80 "
            "percent of their original capacity after 200,000 kilometres. Old car batteries can serve as "
            "stationary storage before they are recycled.",
        ],
    ),
    (
        "edison",
        "Thomas Edison",
        [
            "Thomas Alva Edison (1847–1931) was an American inventor and businessman who held more than 1,000 "
            "patents in the United States. In 1876 he set up his famous laboratory at Menlo Park, New Jersey.",
            "Edison invented the phonograph in 1877, the first machine that could both record sound and play it "
            "back. The first words he recorded were reportedly the nursery rhyme 'Mary had a little lamb'.",
            "Edison did not invent the first electric light, but in 1879 he developed a practical, long-lasting "
            "incandescent light bulb with a carbon filament. His Pearl Street power station in New York began "
            "supplying direct current in 1882.",
            "In the 'war of the currents', Edison promoted direct current (DC), while George Westinghouse backed "
            "the alternating current (AC) system developed by Nikola Tesla. Alternating current won because it "
            "could be transmitted over long distances far more efficiently.",
        ],
    ),
    (
        "tesla",
        "Nikola Tesla",
        [
            "Nikola Tesla (1856–1943) was a Serbian-American inventor and engineer, born in Smiljan in what is "
            "now Croatia. He emigrated to the United States in 1884 and briefly worked for Thomas Edison.",
            "Tesla invented the alternating-current induction motor and developed a polyphase AC system, whose "
            "patents he licensed to George Westinghouse. The system lit the 1893 World's Columbian Exposition in "
            "Chicago.",
            "In 1891 Tesla invented the Tesla coil, a transformer that produces very high voltages. He also "
            "experimented with wireless transmission of energy and built Wardenclyffe Tower on Long Island for "
            "it, but the project ran out of money.",
            "The SI unit of magnetic flux density, the tesla, is named after him, as is the electric-car company "
            "founded in 2003. He died poor in a New York hotel room in January 1943.",
        ],
    ),
    (
        "iceland",
        "Travelling in Iceland",
        [
            "Iceland is a Nordic island country in the North Atlantic with about 390,000 inhabitants, most of "
            "whom live in and around the capital, Reykjavík. Its landscape is shaped by volcanoes, glaciers and "
            "geothermal springs.",
            "The Ring Road, Route 1, circles the island for about 1,320 kilometres and links most inhabited "
            "areas. Driving the whole loop takes at least a week if you want time for stops.",
            "The best time to see the northern lights in Iceland is from September to March, when the nights are "
            "long and dark. Clear skies are essential, so check the aurora and cloud forecasts before driving out "
            "of town.",
            "In summer the sun barely sets: around the June solstice Reykjavík has about 21 hours of daylight. "
            "Many hotels provide blackout curtains or sleep masks.",
            "The Blue Lagoon is a geothermal spa in a lava field near Keflavík airport, filled with milky blue "
            "water rich in silica. Entry usually has to be booked in advance.",
        ],
    ),
    (
        "jet-lag",
        "Jet lag",
        [
            "Jet lag happens when travel across several time zones puts the body's internal clock out of step "
            "with local time. Typical symptoms are poor sleep, daytime tiredness, difficulty concentrating and "
            "an upset stomach.",
            "Flying east is usually harder than flying west, because it forces the body clock forward, and most "
            "people find it easier to stay up later than to fall asleep earlier. Recovery takes roughly one day "
            "per time zone crossed.",
            "After flying west, for example from London to New York, seek bright light in the late afternoon and "
            "evening and try to stay awake until about 10 pm local time. This helps to delay the body clock.",
            "After flying east, for example from New York to London, get outside in the morning light and avoid "
            "long naps on the day you arrive. A nap of under 30 minutes is fine if you are very sleepy.",
            "Melatonin, a hormone that signals darkness to the body, is sometimes taken in small doses at the "
            "new bedtime to reduce jet lag. It is sold without a prescription in some countries but needs one in "
            "others.",
        ],
    ),
    (
        "volcanoes",
        "Volcanoes",
        [
            "A volcano is an opening in the Earth's crust through which molten rock, ash and gases escape. "
            "Molten rock is called magma while it is underground and lava once it reaches the surface.",
            "Most volcanoes lie along the boundaries of tectonic plates. The Pacific Ring of Fire, a "
            "horseshoe-shaped belt around the Pacific Ocean, contains about three quarters of the world's active "
            "volcanoes.",
            "Mount Vesuvius erupted in AD 79 and buried the Roman towns of Pompeii and Herculaneum under ash and "
            "pumice. The ruins, rediscovered in the 18th century, show daily life frozen in time.",
            "The eruption of Eyjafjallajökull in Iceland in April 2010 sent a cloud of ash across Europe. Air "
            "traffic was halted for several days, affecting about ten million passengers.",
            "Hawaii's volcanoes, such as Kīlauea, produce runny basaltic lava that flows gently rather than "
            "exploding. They formed above a hotspot in the middle of the Pacific plate, not at a plate boundary.",
        ],
    ),
    (
        "honeybees",
        "Honeybees",
        [
            "A honeybee colony has one queen, tens of thousands of female worker bees and, in summer, a few "
            "hundred male drones. The queen can lay up to 2,000 eggs a day.",
            "Worker bees tell each other where to find food with the waggle dance. The angle of the dance "
            "relative to vertical shows the direction of the flowers relative to the sun, and its duration "
            "shows the distance.",
            "Bees collect nectar from flowers, add enzymes to it and store it in wax cells, then fan it with "
            "their wings until most of the water has evaporated and it has thickened into honey. A colony may "
            "visit millions of flowers to produce a single kilogram.",
            "Honeybees pollinate many crops, including apples, almonds and berries. Colony losses caused by "
            "parasites such as the varroa mite, by pesticides and by poor nutrition worry farmers and "
            "scientists.",
            "Sealed honey hardly ever spoils, because it contains little water and is slightly acidic. Pots of "
            "honey found in ancient Egyptian tombs were still preserved.",
        ],
    ),
    (
        "apollo",
        "Apollo Moon landings",
        [
            "Apollo 11 landed on the Moon on 20 July 1969. Neil Armstrong became the first person to walk on the "
            "lunar surface, followed by Buzz Aldrin, while Michael Collins stayed in orbit in the command module.",
            "Apollo 12 landed in November 1969 in the Ocean of Storms, close to the uncrewed Surveyor 3 probe. "
            "Its moonwalkers, Pete Conrad and Alan Bean, brought parts of the probe back to Earth.",
            "Apollo 13, launched in April 1970, never landed: an oxygen tank exploded on the way to the Moon. The "
            "crew used the lunar module as a lifeboat and returned safely to Earth.",
            "Apollo 17, in December 1972, was the last crewed Moon landing. Eugene Cernan was the last person to "
            "walk on the Moon.",
            "In total twelve astronauts walked on the Moon during six successful landings between 1969 and 1972. "
            "They brought back 382 kilograms of lunar rock and soil.",
        ],
    ),
    (
        "chess",
        "Chess",
        [
            "Chess is a board game for two players on a board of 64 squares arranged in an eight-by-eight grid. "
            "Each player starts with sixteen pieces: a king, a queen, two rooks, two bishops, two knights and "
            "eight pawns.",
            "The aim is to checkmate the opponent's king, that is, to attack it so that it has no legal way to "
            "escape. A game can also end in a draw, for example by stalemate, when the player to move has no "
            "legal move but is not in check.",
            "Castling is a special move in which the king moves two squares towards a rook and the rook jumps to "
            "the square the king crossed. It is only allowed if neither piece has moved before and the king is "
            "not in check.",
            "In 1997 IBM's computer Deep Blue beat world champion Garry Kasparov in a six-game match, the first "
            "time a machine defeated a reigning world champion under tournament conditions. Kasparov had won "
            "their first match, in 1996, by 4–2.",
            "Magnus Carlsen of Norway became world champion in 2013 by defeating Viswanathan Anand. He held the "
            "title until 2023, when he chose not to defend it.",
        ],
    ),
    (
        "recycling",
        "Recycling",
        [
            "Recycling turns waste materials into new products, saving raw materials and energy. Aluminium is "
            "especially worth recycling: making a can from recycled metal uses about 95 percent less energy than "
            "making it from ore.",
            "Glass can be recycled again and again without losing quality. Bottles and jars should be emptied "
            "and, in many towns, sorted by colour.",
            "Plastics are recycled far less often than metal or glass: worldwide only about nine percent of all "
            "the plastic ever made has been recycled. Many kinds of plastic can only be recycled a few times "
            "before the material becomes too weak.",
            "Greasy pizza boxes, used paper cups and nappies usually cannot go in the paper recycling bin, "
            "because food and plastic coatings contaminate the paper. When in doubt, check your local council's "
            "rules.",
        ],
    ),
    (
        "everest",
        "Mount Everest",
        [
            "Mount Everest, on the border between Nepal and the Tibet Autonomous Region of China, is the highest "
            "mountain above sea level. In 2020 China and Nepal jointly announced a new official height of "
            "8,848.86 metres.",
            "Edmund Hillary of New Zealand and Tenzing Norgay, a Sherpa from Nepal, made the first confirmed "
            "ascent on 29 May 1953. News of their success reached London on the morning of Queen Elizabeth II's "
            "coronation.",
            "Most climbers attempt the summit in May, when a short window of calmer weather opens before the "
            "monsoon. Above 8,000 metres lies the 'death zone', where each breath holds only about a third of "
            "the oxygen available at sea level.",
            "The mountain is known in Nepal as Sagarmatha and in Tibetan as Chomolungma. Its English name honours "
            "George Everest, a British Surveyor General of India, although he himself objected to the choice.",
        ],
    ),
]

# Queries: ``id``, ``text``, ``split`` plus optional ``type`` (DuReader-style
# DESCRIPTION / ENTITY / YES_NO) and ``domain``.
QUERIES: list[dict] = [
    {"id": "en-q01", "text": "When was the Eiffel Tower built?", "split": "test", "type": "ENTITY", "domain": "travel"},
    {"id": "en-q02", "text": "What is the capital city of Australia?", "split": "test", "type": "ENTITY",
     "domain": "travel"},
    {"id": "en-q03", "text": "How long is the Great Wall of China?", "split": "test", "type": "ENTITY",
     "domain": "history"},
    {"id": "en-q04", "text": "How do I convert Fahrenheit to Celsius?", "split": "test", "type": "DESCRIPTION",
     "domain": "science"},
    {"id": "en-q05", "text": "Who won the European football championship in 2016?", "split": "test",
     "type": "ENTITY", "domain": "sports"},
    {"id": "en-q06", "text": "How many hours of sleep does an adult need?", "split": "test", "type": "DESCRIPTION",
     "domain": "health"},
    {"id": "en-q07", "text": "How is deoxyribonucleic acid copied when a cell divides?", "split": "test",
     "type": "DESCRIPTION", "domain": "science"},
    {"id": "en-q08", "text": "How do astronauts on the International Space Station get oxygen to breathe?",
     "split": "test", "type": "DESCRIPTION", "domain": "science"},
    {"id": "en-q09", "text": "What did Nikola Tesla invent?", "split": "test", "type": "ENTITY", "domain": "history"},
    {"id": "en-q10", "text": "How to beat jet lag after flying from New York to London", "split": "test",
     "type": "DESCRIPTION", "domain": "travel"},
    {"id": "en-q11", "text": "Did Kasparov lose to Deep Blue in 1996?", "split": "test", "type": "YES_NO",
     "domain": "sports"},
    {"id": "en-q12", "text": "How can a website protect itself against cross-site scripting?", "split": "test",
     "type": "DESCRIPTION", "domain": "technology"},
    {"id": "en-q13", "text": "When is the best time to see the northern lights in Iceland?", "split": "test",
     "type": "DESCRIPTION", "domain": "travel"},
    {"id": "en-q14", "text": "How much water should I drink every day?", "split": "test", "type": "DESCRIPTION",
     "domain": "health"},
    {"id": "en-q15", "text": "Why are leaves green?", "split": "test", "type": "DESCRIPTION", "domain": "science"},
    {"id": "en-q16", "text": "Who was the first Roman emperor?", "split": "test", "type": "ENTITY",
     "domain": "history"},
    {"id": "en-q17", "text": "Can I pack a power bank in my checked luggage?", "split": "test", "type": "YES_NO",
     "domain": "technology"},
    {"id": "en-q18", "text": "In which year were the Tokyo 2020 Olympics actually held?", "split": "test",
     "type": "ENTITY", "domain": "sports"},
    {"id": "en-q19", "text": "Does adding oil to pasta water stop it from sticking?", "split": "dev",
     "type": "YES_NO", "domain": "food"},
    {"id": "en-q20", "text": "How much caffeine is in a cup of coffee?", "split": "dev", "type": "DESCRIPTION",
     "domain": "food"},
    {"id": "en-q21", "text": "When did Apollo 12 land on the Moon?", "split": "dev", "type": "ENTITY",
     "domain": "science"},
    {"id": "en-q22", "text": "Who were the first people to climb Mount Everest?", "split": "dev", "type": "ENTITY",
     "domain": "travel"},
    {"id": "en-q23", "text": "What were the causes of the French Revolution?", "split": "dev",
     "type": "DESCRIPTION", "domain": "history"},
    {"id": "en-q24", "text": "How do bees make honey?", "split": "train", "type": "DESCRIPTION",
     "domain": "science"},
    {"id": "en-q25", "text": "Which volcano disrupted European air travel in 2010?", "split": "train",
     "type": "ENTITY", "domain": "science"},
    {"id": "en-q26", "text": "How do I make a sourdough starter?", "split": "train", "type": "DESCRIPTION",
     "domain": "food"},
    # A training query that leaks en-q01 (a paraphrase of a test query): the leakage check's example.
    {"id": "en-q27", "text": "What year was the Eiffel Tower built?", "split": "train", "type": "ENTITY",
     "domain": "travel"},
]

# Graded judgments (0 no match, 1 on topic but does not meet the need,
# 2 partly satisfies, 3 precisely answers), made by reading each passage.
QRELS: dict[str, dict[str, int]] = {
    # Eiffel Tower: the construction dates answer; "built for the 1889 World's Fair" (in two near
    # duplicates) only implies the date; the light bulbs "installed in 2000" share the words.
    "en-q01": {"en-eiffel-1": 3, "en-eiffel-0": 2, "en-paris-2": 2, "en-eiffel-4": 1, "en-eiffel-2": 1,
               "en-eiffel-3": 1, "en-canberra-2": 0, "en-great-wall-2": 0},
    # Sydney is the entity swap; Parliament moving to Canberra implies the answer.
    "en-q02": {"en-canberra-0": 3, "en-canberra-2": 2, "en-canberra-4": 1, "en-canberra-3": 1,
               "en-canberra-1": 1, "en-paris-0": 0, "en-tokyo-0": 0},
    # The answer says "Its total length", never "Great Wall"; the Chinese passage is on topic.
    "en-q03": {"en-great-wall-1": 3, "en-great-wall-0": 1, "en-great-wall-2": 1, "en-great-wall-3": 1,
               "en-great-wall-4": 1, "zh-qinshihuang-2": 1, "en-everest-0": 0, "en-marathon-0": 0},
    # Fahrenheit -> Celsius; the Celsius -> Fahrenheit passages are the wrong direction.
    "en-q04": {"en-temperature-2": 3, "en-temperature-0": 2, "en-temperature-1": 1, "en-temperature-3": 1,
               "en-temperature-5": 1, "en-temperature-4": 1, "en-html-4": 0, "en-hydration-4": 0},
    # 2016 vs the Women's Euro 2017 and the other editions.
    "en-q05": {"en-euro-1": 3, "en-euro-2": 1, "en-euro-3": 1, "en-euro-4": 1, "en-euro-0": 1,
               "zh-weiqi-2": 0, "zh-panda-4": 0, "en-canberra-1": 0},
    "en-q06": {"en-sleep-0": 3, "en-sleep-1": 1, "en-sleep-2": 1, "en-sleep-3": 1, "en-sleep-4": 1,
               "en-iceland-3": 0, "en-pasta-1": 0, "en-jet-lag-0": 0},
    # The query spells the acronym out; the answer only says DNA.
    "en-q07": {"en-dna-3": 3, "en-dna-0": 1, "en-dna-1": 1, "en-dna-2": 1, "en-dna-4": 1,
               "en-sourdough-0": 0, "en-honeybees-2": 0, "en-lithium-2": 0},
    # The answer says "breathable air", "O2" and "ISS", not "oxygen" or "International Space Station".
    "en-q08": {"en-iss-2": 3, "en-iss-0": 1, "en-iss-1": 1, "en-iss-3": 1, "en-apollo-2": 0,
               "en-everest-2": 0, "en-photosynthesis-0": 0, "en-photosynthesis-4": 0},
    # Entity swap: Edison's inventions are not Tesla's.
    "en-q09": {"en-tesla-1": 3, "en-tesla-2": 3, "en-edison-3": 2, "en-tesla-0": 1, "en-tesla-3": 1,
               "en-edison-1": 0, "en-edison-2": 0, "en-lithium-3": 0},
    # New York -> London is eastward; the London -> New York advice is the wrong direction.
    "en-q10": {"en-jet-lag-3": 3, "en-jet-lag-4": 2, "en-jet-lag-2": 1, "en-jet-lag-1": 1, "en-jet-lag-0": 1,
               "en-marathon-1": 0, "en-tennis-4": 0, "en-tesla-3": 0},
    # No: Kasparov won in 1996 and lost the 1997 rematch.
    "en-q11": {"en-chess-3": 3, "en-chess-4": 1, "en-chess-1": 1, "en-iceland-4": 0, "en-edison-2": 0,
               "en-hydration-4": 0, "en-marathon-2": 0},
    # The answer only says XSS (expanded in the previous passage).
    "en-q12": {"en-html-3": 3, "en-html-2": 2, "en-html-1": 1, "en-html-0": 1, "en-html-4": 0,
               "en-passwords-1": 0, "en-great-wall-0": 0, "en-canberra-0": 0},
    "en-q13": {"en-iceland-2": 3, "en-iceland-3": 1, "en-iceland-0": 1, "en-iceland-1": 1,
               "en-volcanoes-3": 0, "en-vitamin-d-1": 0, "en-great-wall-0": 0, "en-jet-lag-2": 0},
    "en-q14": {"en-hydration-0": 3, "en-hydration-4": 2, "en-hydration-1": 1, "en-hydration-3": 1,
               "en-hydration-2": 1, "en-sourdough-1": 0, "en-pasta-0": 0, "en-coffee-0": 0},
    "en-q15": {"en-photosynthesis-1": 3, "en-photosynthesis-0": 1, "en-photosynthesis-2": 1,
               "en-photosynthesis-4": 1, "en-sleep-3": 0, "en-lithium-1": 0, "en-hydration-1": 0,
               "en-vitamin-d-2": 0},
    # Augustus; Romulus Augustulus was the last western emperor, Qin Shi Huang the first Chinese one.
    "en-q16": {"en-rome-2": 3, "en-rome-4": 1, "en-rome-3": 1, "en-rome-1": 1, "en-rome-0": 1,
               "en-french-revolution-4": 0, "zh-qinshihuang-0": 0, "en-volcanoes-2": 0},
    # No: spare batteries and power banks go in the cabin.
    "en-q17": {"en-lithium-2": 3, "en-lithium-0": 1, "en-lithium-1": 1, "en-lithium-3": 0,
               "en-iceland-4": 0, "en-chess-1": 0, "en-recycling-3": 0},
    # 2021; a Chinese passage about Ma Long also says so (lexical runs cannot find it).
    "en-q18": {"en-tokyo-2": 3, "zh-pingpong-4": 2, "en-tokyo-0": 1, "en-tokyo-1": 0, "en-paris-4": 0,
               "en-euro-3": 0, "en-marathon-1": 0, "zh-olympics-2": 0},
    # No: stirring does.
    "en-q19": {"en-pasta-1": 3, "en-pasta-0": 1, "en-pasta-3": 1, "en-pasta-4": 1, "en-pasta-2": 1,
               "en-honeybees-2": 0, "en-temperature-1": 0, "en-iss-2": 0},
    "en-q20": {"en-coffee-4": 3, "en-hydration-4": 1, "en-coffee-0": 1, "en-coffee-2": 1, "zh-tea-4": 1,
               "en-sleep-2": 0, "en-pasta-3": 0},
    # November 1969; Apollo 11 landed in July 1969.
    "en-q21": {"en-apollo-1": 3, "en-apollo-0": 1, "en-apollo-3": 1, "en-apollo-4": 1, "en-apollo-2": 1,
               "en-great-wall-3": 0, "en-edison-2": 0, "zh-taiji-3": 0},
    "en-q22": {"en-everest-1": 3, "en-everest-0": 1, "en-everest-2": 1, "en-everest-3": 1,
               "en-apollo-0": 0, "en-edison-1": 0, "en-eiffel-3": 0},
    "en-q23": {"en-french-revolution-0": 3, "en-french-revolution-1": 1, "en-french-revolution-3": 1,
               "en-french-revolution-4": 1, "en-french-revolution-2": 1, "en-paris-1": 0,
               "en-great-wall-2": 0, "en-eiffel-4": 0},
    "en-q24": {"en-honeybees-2": 3, "en-honeybees-1": 1, "en-honeybees-4": 1, "en-honeybees-0": 1,
               "en-honeybees-3": 1, "en-hydration-4": 0, "en-html-4": 0},
    "en-q25": {"en-volcanoes-3": 3, "en-volcanoes-0": 1, "en-volcanoes-2": 1, "en-volcanoes-4": 1,
               "en-iceland-0": 1, "en-euro-1": 0, "en-iss-2": 0},
    "en-q26": {"en-sourdough-1": 3, "en-sourdough-0": 2, "en-sourdough-2": 1, "en-sourdough-3": 1,
               "en-sourdough-4": 1, "en-coffee-0": 0, "en-hydration-4": 0},
    "en-q27": {"en-eiffel-1": 3, "en-eiffel-0": 2, "en-paris-2": 2, "en-eiffel-4": 1, "en-eiffel-2": 1,
               "en-eiffel-3": 1, "en-canberra-2": 0, "en-great-wall-2": 0},
}
